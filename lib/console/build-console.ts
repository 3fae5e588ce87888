/**
 * Builds the web console: one esbuild bundle of `lib/console/web/main.tsx` (Preact, JSX automatic) and its stylesheet
 * under content-hashed names, plus the `index.html` that loads them. The HTML names its files relative to itself
 * (`console/app-….js`): on AWS the API serves the page under its stage prefix (`/prod/`), so an absolute `/console/…`
 * would miss. The local runtime builds into `<dataDir>/console` at start; the `console/assets` Lambda's bundle
 * carries a build beside its handler.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The console's source folder (`lib/console/web/`). */
export const CONSOLE_SOURCE_DIR = fileURLToPath(new URL('./web/', import.meta.url));
/** The page every console path starts from. */
export const CONSOLE_INDEX = 'index.html';

export interface BuildConsoleOptions {
  /** Where the files go; emptied first (a stale hashed file would linger otherwise). */
  outDir: string;
  /** Default true. */
  minify?: boolean;
}

export interface BuildConsoleResult {
  /** Names of the files written into `outDir`: `index.html` and the hashed `app-….js` / `app-….css`. */
  files: string[];
  /** The source files the bundle was made from (absolute paths). */
  inputs: string[];
}

/**
 * Bundles the console into `outDir` (about a second).
 *
 * @example
 * const { files } = await buildConsole({ outDir: join(dataDir, 'console') });
 * // files: ['app-3F2K….css', 'app-Q7RM….js', 'index.html']
 */
export async function buildConsole(options: BuildConsoleOptions): Promise<BuildConsoleResult> {
  const { outDir } = options;
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [
      { in: join(CONSOLE_SOURCE_DIR, 'main.tsx'), out: 'app' },
      { in: join(CONSOLE_SOURCE_DIR, 'styles.css'), out: 'app' },
    ],
    outdir: outDir,
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: options.minify ?? true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
    // ECharts checks process.env.NODE_ENV for its development warnings.
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((f) => f.endsWith('.js'));
  const style = outputs.find((f) => f.endsWith('.css'));
  if (!script || !style) throw new Error(`The console build wrote no script or stylesheet: ${outputs.join(', ')}`);
  writeFileSync(join(outDir, CONSOLE_INDEX), indexHtml(script, style));
  const inputs = Object.keys(result.metafile.inputs).map((p) => resolve(p));
  return { files: readdirSync(outDir).sort(), inputs };
}

/** The one HTML page: no inline script or style (the CSP allows only the console's own files). */
function indexHtml(script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flywheel console</title>
<link rel="stylesheet" href="console/${style}">
<script type="module" src="console/${script}"></script>
</head>
<body>
<div id="app"><noscript>The Flywheel console needs JavaScript.</noscript></div>
</body>
</html>
`;
}

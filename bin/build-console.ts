/**
 * `npm run build:console [-- --out DIR] [--no-minify]`: builds the web console (lib/console/build-console.ts) into DIR
 * (default `dist/console`). The local runtime builds its own copy at start; the CDK bundling of the `console/assets`
 * Lambda runs this into the function's bundle.
 */
import { resolve } from 'node:path';
import { buildConsole } from '../lib/console/build-console.ts';

const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const outDir = resolve(outAt >= 0 && args[outAt + 1] ? args[outAt + 1]! : 'dist/console');
const started = performance.now();
const { files } = await buildConsole({ outDir, minify: !args.includes('--no-minify') });
process.stdout.write(`built the console into ${outDir} in ${Math.round(performance.now() - started)} ms: ${files.join(', ')}\n`);

/**
 * The console's files over the API, open (no key: they are public code; every API call the page makes needs one):
 * `GET /` answers the page (`index.html`, never cached, so a new build is picked up at once) and
 * `GET /console/{asset}` one file of the build (hashed names cached for a year, immutable). The files come from the
 * folder named by `FLYWHEEL_CONSOLE_DIR` (the local runtime's `<dataDir>/console`, the Lambda's `./console/` beside its
 * bundle). An asset name is a plain file name of the build or nothing: no separators, no dot-dot, no hidden files;
 * anything else is refused before the disk is touched.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { errorResult } from '../../api/json-response.ts';
import type { ApiHandler } from '../../api/route.ts';

/** The variable naming the built console's folder. */
export const CONSOLE_DIR_ENV = 'FLYWHEEL_CONSOLE_DIR';
const INDEX = 'index.html';

/** What a browser may do with the console's pages: only its own files and API, no framing, no inline script. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' blob: data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
};
/** Served as bytes (base64 through API Gateway); the rest is text. */
const BINARY = new Set(['.png', '.woff2', '.ico']);
/** A file name of the build: letters, digits, `-`, `_`, one or more `.ext`; never a path. */
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,100}(?:\.[A-Za-z0-9]{1,10}){1,3}$/;
/** esbuild's content hash in a name (`app-Q7RM3XCN.js`): the bytes behind such a name never change. */
const HASHED_NAME = /-[A-Z0-9]{8}\./;

interface ConsoleFile {
  body: Buffer;
  contentType: string;
  binary: boolean;
}

/** Files read once per build folder and name (a new build is a new folder or new hashed names). */
const cache = new Map<string, { listed: Set<string>; files: Map<string, ConsoleFile> }>();

function consoleDir(env: NodeJS.ProcessEnv): string {
  const dir = env[CONSOLE_DIR_ENV];
  if (!dir) throw new NotFoundError(`The console is not built here: ${CONSOLE_DIR_ENV} names no folder (run npm run build:console)`);
  return dir;
}

/** The build's file, or NotFoundError; the name must already have passed `ASSET_NAME`. */
function readConsoleFile(dir: string, name: string, fresh: boolean): ConsoleFile {
  let entry = cache.get(dir);
  if (!entry || fresh) {
    let listed: string[];
    try {
      listed = readdirSync(dir).filter((f) => statSync(join(dir, f)).isFile());
    } catch {
      throw new NotFoundError(`The console is not built here: no folder ${dir} (run npm run build:console)`);
    }
    entry = { listed: new Set(listed), files: new Map() };
    cache.set(dir, entry);
  }
  // Only names the build's folder lists are read: the name is never joined onto a path otherwise.
  if (!entry.listed.has(name)) throw new NotFoundError(`No console file ${name}`);
  let file = entry.files.get(name);
  if (!file || fresh) {
    const ext = name.slice(name.lastIndexOf('.'));
    file = { body: readFileSync(join(dir, name)), contentType: CONTENT_TYPES[ext] ?? 'application/octet-stream', binary: BINARY.has(ext) };
    entry.files.set(name, file);
  }
  return file;
}

function fileResult(file: ConsoleFile, cacheControl: string): APIGatewayProxyResult {
  return {
    statusCode: 200,
    headers: { 'content-type': file.contentType, 'cache-control': cacheControl, ...CONSOLE_SECURITY_HEADERS },
    body: file.binary ? file.body.toString('base64') : file.body.toString('utf8'),
    ...(file.binary ? { isBase64Encoded: true } : {}),
  };
}

/** A JSON error with the console's security headers too. */
function refusal(error: unknown): APIGatewayProxyResult {
  const result = errorResult(error);
  return { ...result, headers: { ...result.headers, ...CONSOLE_SECURITY_HEADERS, 'cache-control': 'no-store' } };
}

/**
 * `GET /`: the console's page. Behind a stage prefix without its trailing slash (`/prod`), a redirect to `/prod/`
 * first, so the page's relative file names resolve under the prefix.
 *
 * @example
 * routes.push({ method: 'GET', path: '/', operationId: 'getConsole', lambda: 'console/assets', apiKeyRequired: false, scope: 'read', make: makeGetConsoleHandler });
 */
export function makeGetConsoleHandler(_ports?: unknown, env: NodeJS.ProcessEnv = process.env): ApiHandler {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    try {
      const seen = event.requestContext?.path;
      if (seen && !seen.endsWith('/')) {
        return { statusCode: 308, headers: { location: `${seen}/`, 'cache-control': 'no-store', ...CONSOLE_SECURITY_HEADERS }, body: '' };
      }
      // Re-listed on every page load: a rebuilt console (new hashed names) is served without a restart.
      return fileResult(readConsoleFile(consoleDir(env), INDEX, true), 'no-cache');
    } catch (error) {
      return refusal(error);
    }
  };
}

/**
 * `GET /console/{asset}`: one file of the build. 400 for a name that is not a plain file name (`..`, a separator, an
 * encoded one), 404 for one the build does not have.
 *
 * @example
 * await makeGetConsoleAssetHandler()({ pathParameters: { asset: 'app-Q7RM3XCN.js' }, … }); // 200 text/javascript
 */
export function makeGetConsoleAssetHandler(_ports?: unknown, env: NodeJS.ProcessEnv = process.env): ApiHandler {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    try {
      const asset = event.pathParameters?.asset ?? '';
      if (!ASSET_NAME.test(asset)) {
        throw new ValidationError('Invalid console file name', [{ path: 'path.asset', message: 'a file name of the console build (letters, digits, - and _, then .ext)' }]);
      }
      const file = readConsoleFile(consoleDir(env), asset, false);
      return fileResult(file, HASHED_NAME.test(asset) ? 'public, max-age=31536000, immutable' : 'no-cache');
    } catch (error) {
      return refusal(error);
    }
  };
}

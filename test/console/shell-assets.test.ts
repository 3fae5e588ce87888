/**
 * The console's file handler on its own: the page and hashed files with their content types, caching and security
 * headers; plain file names only (traversal, separators, hidden files refused before the disk is read); JSON errors
 * for anything else; the redirect that keeps relative file names under an API stage prefix.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../../lib/console/ensure-console-built.ts';
import { CONSOLE_DIR_ENV, makeGetConsoleAssetHandler, makeGetConsoleHandler } from '../../lib/console/http/console-assets.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('flywheel-console-assets-');
let env: NodeJS.ProcessEnv;

function event(path: string, pathParameters: Record<string, string> | null = null, stagePath = `/local${path}`): APIGatewayProxyEvent {
  return { httpMethod: 'GET', path, resource: path, pathParameters, requestContext: { path: stagePath } } as unknown as APIGatewayProxyEvent;
}

beforeAll(() => {
  const root = tempDir();
  const dir = join(root, 'console');
  mkdirSync(dir);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(join(dir, 'app-ABCD1234.js'), 'console.log(1)');
  writeFileSync(join(dir, 'app-ABCD1234.css'), 'body{}');
  writeFileSync(join(dir, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  mkdirSync(join(dir, 'nested.js'));
  writeFileSync(join(root, 'secret.txt'), 'do not serve');
  env = { [CONSOLE_DIR_ENV]: dir };
});

describe('GET /', () => {
  it('answers the page, never cached, with the security headers', async () => {
    const res = await makeGetConsoleHandler(undefined, env)(event('/', null, '/local/'));
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<title>console</title>');
    expect(res.headers).toMatchObject({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' });
    const csp = String(res.headers!['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("img-src 'self' blob: data:");
    expect(csp).toContain("style-src 'self' 'unsafe-inline'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("script-src 'unsafe-inline'");
  });

  it('redirects a stage prefix without its slash, so relative file names stay under it', async () => {
    const res = await makeGetConsoleHandler(undefined, env)(event('/', null, '/prod'));
    expect(res.statusCode).toBe(308);
    expect(res.headers!.location).toBe('/prod/');
  });

  it('says the console is not built when no folder is named', async () => {
    const res = await makeGetConsoleHandler(undefined, {})(event('/'));
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body)).toMatchObject({ error: 'Flywheel.NotFoundError', message: expect.stringContaining('npm run build:console') });
  });
});

describe('GET /console/{asset}', () => {
  const get = (asset: string) => makeGetConsoleAssetHandler(undefined, env)(event(`/console/${asset}`, { asset }));

  it('answers a hashed file with its type, cached for a year', async () => {
    const js = await get('app-ABCD1234.js');
    expect(js.statusCode).toBe(200);
    expect(js.body).toBe('console.log(1)');
    expect(js.headers).toMatchObject({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable' });
    const css = await get('app-ABCD1234.css');
    expect(css.headers!['content-type']).toBe('text/css; charset=utf-8');
  });

  it('answers a binary file base64-encoded for API Gateway, not cached forever without a hash', async () => {
    const png = await get('logo.png');
    expect(png.isBase64Encoded).toBe(true);
    expect(Buffer.from(png.body, 'base64')).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    expect(png.headers!['cache-control']).toBe('no-cache');
  });

  it('refuses traversal and anything that is not a plain file name, naming path.asset', async () => {
    for (const asset of ['../secret.txt', '..%2Fsecret.txt', '..', '.hidden', 'a/b.js', 'a\\b.js', '%2e%2e%2fsecret.txt', 'index.html/..', '', 'x'.repeat(300) + '.js', 'app.js\u0000.png']) {
      const res = await get(asset);
      expect(res.statusCode, asset).toBe(400);
      const body = JSON.parse(res.body);
      expect(body.issues, asset).toEqual([expect.objectContaining({ path: 'path.asset' })]);
      expect(res.body).not.toContain('do not serve');
      expect(res.headers!['content-security-policy']).toContain("default-src 'self'");
    }
  });

  it('answers 404 for a name the build does not have, and for a folder', async () => {
    for (const asset of ['secret.txt', 'app-ZZZZ9999.js', 'nested.js']) {
      const res = await get(asset);
      expect(res.statusCode, asset).toBe(404);
      expect(JSON.parse(res.body).error).toBe('Flywheel.NotFoundError');
    }
  });
});

describe('the console build for a runtime start', () => {
  it('builds once, then copies the cached build while the sources are unchanged', async () => {
    const cacheDir = tempDir();
    const first = await ensureConsoleBuilt({ outDir: join(tempDir(), 'console'), cacheDir });
    expect(first.cached).toBe(false);
    expect(first.files).toHaveLength(3);
    expect(first.files).toEqual(expect.arrayContaining([expect.stringMatching(/^app-[A-Z0-9]{8}\.css$/), expect.stringMatching(/^app-[A-Z0-9]{8}\.js$/), 'index.html']));
    const outDir = join(tempDir(), 'console');
    const second = await ensureConsoleBuilt({ outDir, cacheDir });
    expect(second).toEqual({ files: first.files, cached: true });
    const html = readFileSync(join(outDir, 'index.html'), 'utf8');
    for (const f of first.files.filter((f) => f !== 'index.html')) expect(html).toContain(`"console/${f}"`);
  });
});

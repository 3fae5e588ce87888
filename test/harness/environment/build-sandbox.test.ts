import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxBuildRunner } from '../../../lib/harness/environment/build-runner.ts';
import { detectNode, detectPython, toolchainExposure } from '../../../lib/harness/environment/toolchains.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';

let work: string;
const SECRET = 'FLYWHEEL_HOST_SECRET_5d21';

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'fw-build-sb-'));
  // The sandbox's unprivileged user must reach the bound folders below it.
  chmodSync(work, 0o755);
  writeFileSync(join(work, 'secret.txt'), `${SECRET}\n`);
  mkdirSync(join(work, 'input'));
  writeFileSync(join(work, 'input', 'requirements.flywheel.txt'), 'six\n');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the build sandbox', () => {
  it('writes only the bound output, reads no host secret, reaches only the allowed hosts', async () => {
    const output = join(work, 'out');
    mkdirSync(output);
    writeFileSync(join(output, '.flywheel-output'), '');
    const toolchains = { python: await detectPython(), node: await detectNode() };
    const exposure = toolchainExposure(toolchains);
    const run = sandboxBuildRunner(new NamespaceSandboxProvider({ root: join(work, 'sb') }));
    const target = '/opt/flywheel/env/test-output';
    const r = await run({
      label: 'test',
      inputDir: join(work, 'input'),
      outputs: [{ source: output, target }],
      environment: { id: 'test', binds: exposure.binds, masks: exposure.masks, pathDirs: exposure.pathDirs },
      allowHosts: ['registry.npmjs.org'],
      env: {},
      script: [
        `cat ${join(work, 'secret.txt')} > ${target}/secret.txt 2>&1 || echo unreadable > ${target}/secret.txt`,
        `cat /root/.bash_history > ${target}/history.txt 2>&1 || true`,
        `cat requirements.flywheel.txt > ${target}/input.txt`,
        `python3 -c "import sys; print(sys.version_info[0])" > ${target}/python.txt 2>&1`,
        `node -e "fetch('https://example.com').then(() => console.log('reached'), () => console.log('blocked'))" > ${target}/net.txt 2>&1`,
        `touch ${work}/escaped 2>/dev/null; echo ok`,
      ].join('\n'),
      timeoutMs: 60_000,
    });
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(output, 'input.txt'), 'utf8')).toBe('six\n');
    expect(readFileSync(join(output, 'secret.txt'), 'utf8')).not.toContain(SECRET);
    expect(readFileSync(join(output, 'history.txt'), 'utf8')).not.toMatch(/\S+\n\S+/);
    expect(readFileSync(join(output, 'python.txt'), 'utf8').trim()).toBe('3');
    expect(readFileSync(join(output, 'net.txt'), 'utf8').trim()).toBe('blocked');
    expect(() => readFileSync(join(work, 'escaped'))).toThrow();
  }, 120_000);
});

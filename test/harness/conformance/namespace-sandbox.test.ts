import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { describeSandboxConformance } from './sandbox.conformance.ts';

for (const workspace of ['overlay', 'copy'] as const) {
  let root = '';
  describeSandboxConformance(
    `namespace sandbox, ${workspace} workspace`,
    () => {
      root = mkdtempSync(join(tmpdir(), 'fw-conf-root-'));
      return new NamespaceSandboxProvider({ root, workspace });
    },
    ['strict', 'lenient'],
    () => rmSync(root, { recursive: true, force: true }),
  );
}

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { describeSandboxConformance } from './sandbox.conformance.ts';

const root = mkdtempSync(join(tmpdir(), 'fw-conf-root-'));
describeSandboxConformance('namespace sandbox, overlay workspace', () => new NamespaceSandboxProvider({ root: join(root, 'ovl'), workspace: 'overlay' }));
describeSandboxConformance('namespace sandbox, copied workspace', () => new NamespaceSandboxProvider({ root: join(root, 'copy'), workspace: 'copy' }));

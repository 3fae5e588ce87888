/**
 * `flywheel modes retrain` as a process over a local data folder: human labels on consented signals join the
 * training data, the new model is stored and made current, and the chain's stored classifier picks it up.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/constructs/flywheel-function.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { storedClassifier } from '../../lib/modes/current-classifier.ts';
import { labelSignal } from '../../lib/modes/label-signal.ts';
import { storeFeedback } from './support/modes-fixture.ts';

const run = promisify(execFile);
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Words the labelled set never uses, so only the human labels can teach the model what they mean.
const NOVEL = (i: number) => `the zorblat frobnicator panel number ${i} stayed grey after I clicked deploy`;

it('trains on the consented human labels, stores the model and makes it current', async () => {
  dir = mkdtempSync(join(tmpdir(), 'flywheel-retrain-'));
  const ports = openLocalPorts(dir);
  try {
    for (let i = 0; i < 6; i++) {
      const id = await storeFeedback(ports, { comment: NOVEL(i) });
      await labelSignal(ports, `feedback:${id}`, { modes: ['ui-execution'], labeller: 'ana@example.com' });
    }
    const privateId = await storeFeedback(ports, { comment: NOVEL(99), trainingConsent: false });
    await labelSignal(ports, `feedback:${privateId}`, { modes: ['ui-execution'], labeller: 'ana@example.com' });

    const first = await run('npx', ['node', 'bin/flywheel.ts', 'modes', 'retrain', '--data-dir', dir, '--json'], { cwd: PROJECT_ROOT, timeout: 120_000 });
    const summary = JSON.parse(first.stdout) as { modelVersion: string; training: { labelSources: Record<string, number> } };
    // Only the six consented labels feed training; the seed set is the rest.
    expect(summary.training.labelSources.human).toBe(6);
    expect(summary.training.labelSources.seed).toBeGreaterThan(300);

    const current = await storedClassifier(ports).get();
    expect(current.modelVersion).toBe(summary.modelVersion);
    const probe = current.classify('the zorblat frobnicator panel stayed grey');
    expect(probe.labels.map((l) => l.mode)).toContain('ui-execution');

    // A second retrain makes a new current model; the old one stays stored under its own version.
    const second = await run('npx', ['node', 'bin/flywheel.ts', 'modes', 'retrain', '--data-dir', dir], { cwd: PROJECT_ROOT, timeout: 120_000 });
    expect(second.stdout).toMatch(/^current classifier: \S+ \(taxonomy v1\), \d+ examples: .*6 human/);
  } finally {
    ports.close();
  }
}, 180_000);

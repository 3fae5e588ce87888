/**
 * The record key layout of the registry, in one place so writers and readers agree (sweeps' items, results among
 * them, are in `lib/sweeps/record-keys.ts`).
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | checkpoint | `CHECKPOINT#<id>` | `CHECKPOINT` | `CHECKPOINTS` / `<registeredAt>#<id>` | `CHECKPOINTMODEL#<model>` / `<registeredAt>#<id>` |
 * | suite | `SUITE#<id>` | `SUITE` | `SUITES` / `<id>` | |
 * | suite best-score point | `SUITE#<id>` | `BEST#<at>#<sweepId>` | | |
 * | task (forge, imports) | `TASK#<suite>#<taskId>` | `TASK` | | |
 * | incumbent (what sweeps and experiments compare against) | `INCUMBENT` | `CURRENT` | | |
 * | incumbent history (one per change) | `INCUMBENT` | `HISTORY#<since>#<checkpoint>` | | |
 *
 * Ids never hold `#` (`RegistryId`).
 */

export const registryKeys = {
  checkpoint: (id: string) => ({ pk: `CHECKPOINT#${id}`, sk: 'CHECKPOINT' }),
  allCheckpoints: 'CHECKPOINTS',
  checkpointsByModel: (model: string) => `CHECKPOINTMODEL#${model}`,
  checkpointOrder: (registeredAt: string, id: string) => `${registeredAt}#${id}`,

  suite: (id: string) => ({ pk: `SUITE#${id}`, sk: 'SUITE' }),
  allSuites: 'SUITES',
  suiteBestPoint: (suite: string, at: string, sweepId: string) => ({ pk: `SUITE#${suite}`, sk: `BEST#${at}#${sweepId}` }),
  suiteBestPrefix: 'BEST#',

  task: (suite: string, taskId: string, sk = 'TASK') => ({ pk: `TASK#${suite}#${taskId}`, sk }),

  incumbent: { pk: 'INCUMBENT', sk: 'CURRENT' },
  incumbentHistory: (since: string, checkpoint: string) => ({ pk: 'INCUMBENT', sk: `HISTORY#${since}#${checkpoint}` }),
  incumbentHistoryPrefix: 'HISTORY#',
} as const;

/**
 * The record and blob key layout of judge derivations (`lib/judges/workflow/derive-judges.asl.ts`).
 *
 * | item | pk | sk | gsi1 |
 * | --- | --- | --- | --- |
 * | derivation | `DERIVATION#<id>` | `DERIVATION` | `DERIVATIONS` / `<createdAt>#<id>` |
 * | one judge name's part of it | `DERIVATION#<id>` | `JUDGE#<name>` | |
 *
 * Blobs, under `judges/derivations/<id>/<name>/`: `gold-verdicts.jsonl` (the teacher's labels on the gold items,
 * captured while it was calibrated), `teacher.jsonl` (the training set), `teacher-holdout.jsonl` (held out to measure
 * the student against its teacher), `model/` (the trainer's `model.safetensors` and `metadata.json`); and the
 * derivation's `report.json`.
 */
export const derivationKeys = {
  derivation: (id: string) => ({ pk: `DERIVATION#${id}`, sk: 'DERIVATION' }),
  judge: (id: string, name: string) => ({ pk: `DERIVATION#${id}`, sk: `JUDGE#${name}` }),
  partition: (id: string) => `DERIVATION#${id}`,
  judgePrefix: 'JUDGE#',
  all: 'DERIVATIONS',
  order: (createdAt: string, id: string) => `${createdAt}#${id}`,
};

export const derivationBlobs = {
  prefix: (id: string, name: string) => `judges/derivations/${id}/${name}`,
  teacher: (id: string, name: string) => `judges/derivations/${id}/${name}/teacher.jsonl`,
  holdout: (id: string, name: string) => `judges/derivations/${id}/${name}/teacher-holdout.jsonl`,
  model: (id: string, name: string) => `judges/derivations/${id}/${name}/model`,
  report: (id: string) => `judges/derivations/${id}/report.json`,
};

/**
 * The harness mode an attempt runs in, the one definition every layer uses (shard specs, attempt and trajectory
 * records, sweeps, the CLI, the API):
 * - `strict`: the task's git history out of reach, network only to the task's allow-list (`lib/harness/sandbox/`);
 * - `lenient`: history kept and any host allowed, through the same egress proxy.
 * `flywheel eval compare-modes` scores a model in both, to show how much of a pass leaned on what strict takes away.
 *
 * @example
 * const mode = HarnessModeSchema.parse(flags.mode); // 'strict' | 'lenient', or a ZodError
 * for (const m of HARNESS_MODES) console.log(m);    // strict, lenient: strict first, the order reports use
 */
import { z } from 'zod';

/** Every harness mode, strict first (the order tables, charts and sweeps list them in). */
export const HARNESS_MODES = ['strict', 'lenient'] as const;

export const HarnessModeSchema = z.enum(HARNESS_MODES);

export type HarnessMode = z.infer<typeof HarnessModeSchema>;

/**
 * What a run trains from: `tiny:<seed>` (the trainer's in-code tiny model) or a registered, active checkpoint with
 * the artifact of its weights (`blob:<artifactKey>` for the trainer, which stages the folder from blobs).
 *
 * @example
 * await resolveBase(ports, 'tiny:0');                // { trainerBase: 'tiny:0', model: 'tiny' }
 * await resolveBase(ports, 'coder-7b:step-1200');    // { trainerBase: 'blob:…', model: 'coder-7b', parent: 'coder-7b:step-1200' }
 */
import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { findCheckpoint } from '../../registry/get-checkpoint.ts';

/** `tiny:<seed>`: the seed of the in-code tiny model. */
export const TINY_BASE = /^tiny:(\d{1,10})$/;

export interface ResolvedBase {
  /** `FLYWHEEL_BASE_MODEL` of the policy job. */
  trainerBase: string;
  /** The model family the new checkpoint belongs to. */
  model: string;
  /** The checkpoint trained from (absent for the tiny model). */
  parent?: string;
}

/** Throws `Flywheel.ValidationError` naming `base` when it is neither. */
export async function resolveBase(ports: Pick<Ports, 'records'>, base: string): Promise<ResolvedBase> {
  if (TINY_BASE.test(base)) return { trainerBase: base, model: 'tiny' };
  const checkpoint = await findCheckpoint(ports.records, base);
  if (!checkpoint) throw new ValidationError(`base ${base} is neither tiny:<seed> nor a registered checkpoint`, [{ path: 'base', message: 'tiny:<seed> or a registered checkpoint id' }]);
  if (checkpoint.status !== 'active') throw new ValidationError(`base checkpoint ${base} is ${checkpoint.status}`, [{ path: 'base', message: `checkpoint is ${checkpoint.status}` }]);
  if (!checkpoint.artifactKey) throw new ValidationError(`base checkpoint ${base} has no artifactKey: the trainer needs its weights`, [{ path: 'base', message: 'checkpoint without artifactKey' }]);
  return { trainerBase: `blob:${checkpoint.artifactKey}`, model: checkpoint.model, parent: checkpoint.id };
}

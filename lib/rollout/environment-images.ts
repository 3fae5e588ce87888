/**
 * Tasks that name an environment image (`task.environment.image`: SWE-bench's per-instance images, a Harbor task's
 * built Dockerfile) run on AWS in that image, under a job definition cloned per image by the Batch jobs driver
 * (`JobSubmission.image`). One job runs one image, so a suite is split by image before it is sharded: one group per
 * image, and one (`image` undefined) for the tasks that run in the rollout image with their cached environment.
 *
 * @example
 * for (const { image, tasks } of groupTasksByImage(suite)) console.log(image ?? 'rollout image', tasks.length);
 * // runEvalOnJobsPerImage (`flywheel eval run --jobs`) and plan-shards (sweeps) run one job per group.
 */
import type { Task } from '../harness/task/task-schema.ts';

export interface ImageGroup<T> {
  /** The image the group's tasks name; undefined for tasks that name none. */
  image: string | undefined;
  tasks: T[];
}

/** The tasks grouped by environment image: tasks without one first, then images in name order; task order kept. */
export function groupTasksByImage<T extends { task: Pick<Task, 'environment'> }>(tasks: readonly T[]): Array<ImageGroup<T>> {
  const groups = new Map<string | undefined, T[]>();
  for (const t of tasks) {
    const image = t.task.environment?.image;
    const list = groups.get(image) ?? [];
    list.push(t);
    groups.set(image, list);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a === b ? 0 : a === undefined ? -1 : b === undefined ? 1 : a < b ? -1 : 1))
    .map(([image, list]) => ({ image, tasks: list }));
}

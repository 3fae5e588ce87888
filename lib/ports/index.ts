export type * from './records.ts';
export type * from './blobs.ts';
export type * from './queue.ts';
export type * from './events.ts';
export type * from './metrics.ts';
export { EVENT_SOURCE } from './events.ts';
export type * from './jobs.ts';
export { COMPUTE_CATEGORIES, COMPUTE_POOLS, JOB_NOT_FOUND, TERMINAL_JOB_STATUSES } from './jobs.ts';

/**
 * The record key layout of compute accounting, in one place so writers and readers agree.
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | job usage | `COMPUTEJOB#<jobId>` | `USAGE` | `COMPUTEJOBS` / `<createdAt ISO>#<jobId>` | `COMPUTEJOBSOPEN` / `<jobId>` while it may still run |
 * | state seen (idempotency) | `COMPUTEJOB#<jobId>` | `STATE#<status>` | | |
 * | usage slice (one UTC day) | `COMPUTEJOB#<jobId>` | `SLICE#<day>` | `COMPUTERUN#<runId>` / `<day>#<jobId>` | `COMPUTEDAY#<day>` / `<category>#<jobId>` |
 * | budget | `COMPUTEBUDGET#<scope>#<key>` | `BUDGET` | `COMPUTEBUDGETS` / `<scope>#<key>` | |
 * | budget crossing told | `COMPUTEBUDGET#<scope>#<key>` | `CROSSED#<period>#<threshold>` | | |
 */
export const computeKeys = {
  job: (jobId: string) => ({ pk: `COMPUTEJOB#${jobId}`, sk: 'USAGE' }),
  allJobs: 'COMPUTEJOBS',
  jobListSort: (createdAt: number, jobId: string) => `${new Date(createdAt).toISOString()}#${jobId}`,
  openJobs: 'COMPUTEJOBSOPEN',
  stateSeen: (jobId: string, status: string) => ({ pk: `COMPUTEJOB#${jobId}`, sk: `STATE#${status}` }),
  slice: (jobId: string, day: string) => ({ pk: `COMPUTEJOB#${jobId}`, sk: `SLICE#${day}` }),
  runSlices: (runId: string) => `COMPUTERUN#${runId}`,
  daySlices: (day: string) => `COMPUTEDAY#${day}`,
  budget: (scope: string, key: string) => ({ pk: `COMPUTEBUDGET#${scope}#${key}`, sk: 'BUDGET' }),
  allBudgets: 'COMPUTEBUDGETS',
  crossing: (scope: string, key: string, period: string, threshold: number) => ({ pk: `COMPUTEBUDGET#${scope}#${key}`, sk: `CROSSED#${period}#${threshold}` }),
} as const;

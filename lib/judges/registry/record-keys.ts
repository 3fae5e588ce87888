/**
 * The record layout of the judge registry, in one place so writers and readers agree. Judges live in the records
 * table (no table of their own): one partition per judge name.
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | judge (its head: kind, acceptance rule, the promoted version, a revision for conditional writes) | `JUDGE#<name>` | `HEAD` | `JUDGES` / `<name>` | |
 * | judge version (the full definition, its identity and status) | `JUDGE#<name>` | `VERSION#<version>` | | |
 * | calibration report of a version | `JUDGE#<name>` | `CALIB#<version>#<createdAt>#<id>` | | |
 *
 * A judge name is `[a-z0-9][a-z0-9._-]*` and a version 12 hex characters: neither holds `#`.
 */
export const judgeKeys = {
  head: (name: string) => ({ pk: `JUDGE#${name}`, sk: 'HEAD' }),
  allJudges: 'JUDGES',
  partition: (name: string) => `JUDGE#${name}`,
  version: (name: string, version: string) => ({ pk: `JUDGE#${name}`, sk: `VERSION#${version}` }),
  versionPrefix: 'VERSION#',
  calibration: (name: string, version: string, createdAt: string, id: string) => ({ pk: `JUDGE#${name}`, sk: `CALIB#${version}#${createdAt}#${id}` }),
  /** The sort-key prefix of every report of a judge (`version` undefined) or of one version. */
  calibrationPrefix: (version?: string) => (version === undefined ? 'CALIB#' : `CALIB#${version}#`),
} as const;

/**
 * Collects the git shim's log after each agent command: the shim (`base-system.ts`) appends one record per git run
 * to /tmp/.flywheel/git.log, and `git-observations.ts` turns the records into `git.history-needed` observations. The
 * file lives in the agent's /tmp, so the agent can replace it with a link to a host file: it is opened without
 * following links and must be a regular file inside the attempt's /tmp, then emptied so no record is read twice.
 *
 * @example
 * const log = new GitShimLog('strict', (found) => observed.push(...found));
 * await log.harvest(disk.tmp);   // after every agent command
 */
import { open, realpath, constants as fsConstants } from 'node:fs/promises';
import { join } from 'node:path';
import { parseGitLog } from './git-observations.ts';
import type { SandboxObservation } from './sandbox.ts';
import type { HarnessMode } from '../task/harness-mode.ts';

export class GitShimLog {
  private readonly mode: HarnessMode;
  private readonly record: (found: SandboxObservation[]) => void;
  /** The attempt's /tmp folder with links resolved (where the git log must really be). */
  private tmpReal: string | undefined;

  constructor(mode: HarnessMode, record: (found: SandboxObservation[]) => void) {
    this.mode = mode;
    this.record = record;
  }

  /** Reads and empties the log in `tmp` (the attempt's /tmp on the host); nothing before the disk exists. */
  async harvest(tmp: string | undefined): Promise<void> {
    if (!tmp) return;
    const file = join(tmp, '.flywheel', 'git.log');
    const real = await realpath(file).catch(() => undefined);
    this.tmpReal ??= await realpath(tmp);
    if (real !== join(this.tmpReal, '.flywheel', 'git.log')) return;
    const handle = await open(file, fsConstants.O_RDWR | fsConstants.O_NOFOLLOW).catch(() => undefined);
    if (!handle) return;
    try {
      if (!(await handle.stat()).isFile()) return;
      const text = await handle.readFile('utf8');
      if (!text) return;
      await handle.truncate(0);
      this.record(parseGitLog(text, this.mode));
    } finally {
      await handle.close();
    }
  }
}

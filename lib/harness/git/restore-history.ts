/**
 * Puts back the `.git` that `stripHistory` moved into its vault: the sandbox's `.git` (and anything the agent wrote
 * in it) is removed and the vault's directory is renamed back untouched, so the repository is byte for byte as before.
 */
import { rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { moveDir } from './strip-history.ts';

/**
 * Idempotent: a second call after a successful restore finds an empty vault and does nothing.
 *
 * @example
 * await restoreHistory({ repoDir: '/work/task', vaultDir: '/var/flywheel/vault/attempt-1' });
 */
export async function restoreHistory(input: { repoDir: string; vaultDir: string }): Promise<{ restored: boolean }> {
  const vaultGitDir = join(input.vaultDir, 'git');
  const present = await stat(vaultGitDir).then(
    () => true,
    () => false,
  );
  if (!present) return { restored: false };
  await rm(join(input.repoDir, '.git'), { recursive: true, force: true });
  await moveDir(vaultGitDir, join(input.repoDir, '.git'));
  await rmdir(input.vaultDir).catch(() => undefined);
  return { restored: true };
}

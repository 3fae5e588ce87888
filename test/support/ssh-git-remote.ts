/**
 * An `ssh://` git remote for end-to-end tests, served from this machine: a folder of bare repositories and a stand-in
 * `ssh` command (a shell script put first on the PATH of the process under test) that runs `git-upload-pack` on the
 * named repository of that folder instead of connecting anywhere. Git clones `ssh://<host>/<path>` by running
 * `ssh <host> "git-upload-pack '<path>'"`, so the runtime, its rollout jobs and the harness's own (clean-environment)
 * git all fetch the fixture as they would a real remote, and an allow-list such as `ssh://git.fixture.test/**` holds.
 * Only fetching is served; pushing is refused.
 *
 * @example
 * const remote = await sshGitRemote();
 * const { url, commit } = remote.publish('acme/greeter.git', checkoutDir);
 * startRuntime({ dataDir, env: { PATH: remote.path(), FLYWHEEL_TASK_SOURCES: remote.allow } });
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gitSync } from './git-fixture.ts';

export interface SshGitRemote {
  /** The fake host name in the URLs. */
  host: string;
  /** An allow-list pattern for FLYWHEEL_TASK_SOURCES matching every repository of this remote. */
  allow: string;
  /** The PATH to give the process under test: the stand-in `ssh` first, then `base` (default this process's PATH). */
  path(base?: string): string;
  /** Publishes a checkout (a non-bare repository) as `<name>` on the remote; returns its URL and HEAD commit. */
  publish(name: string, checkout: string): { url: string; commit: string };
  close(): void;
}

export function sshGitRemote(host = 'git.fixture.test'): SshGitRemote {
  const dir = mkdtempSync(join(tmpdir(), 'flywheel-ssh-remote-'));
  const root = join(dir, 'repos');
  const bin = join(dir, 'bin');
  mkdirSync(root, { recursive: true });
  mkdirSync(bin, { recursive: true });
  // The last argument is the remote command: git-upload-pack '/acme/greeter.git'.
  const script = [
    '#!/bin/sh',
    'for last; do :; done',
    'cmd=${last%% *}',
    "path=$(printf '%s' \"${last#* }\" | tr -d \"'\")",
    'case "$path" in *..*) echo "fixture ssh: bad path $path" >&2; exit 128;; esac',
    'if [ "$cmd" != git-upload-pack ]; then echo "fixture ssh: only fetching is served (got $cmd)" >&2; exit 128; fi',
    `exec git-upload-pack "${root}$path"`,
    '',
  ].join('\n');
  writeFileSync(join(bin, 'ssh'), script);
  chmodSync(join(bin, 'ssh'), 0o755);
  return {
    host,
    allow: `ssh://${host}/**`,
    path: (base = process.env.PATH ?? '/usr/bin:/bin') => `${bin}:${base}`,
    publish(name, checkout) {
      const target = join(root, name);
      mkdirSync(dirname(target), { recursive: true });
      gitSync(dirname(target), ['clone', '-q', '--bare', checkout, target]);
      return { url: `ssh://${host}/${name}`, commit: gitSync(checkout, ['rev-parse', 'HEAD']) };
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

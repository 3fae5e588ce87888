/**
 * Every variable a sandboxed command sees, and nothing of the harness's own environment (bubblewrap clears it): a
 * fixed base, the proxy variables pointing at the attempt's forwarder (both modes run in their own network namespace), then the task environment's
 * variables and the spec's, which win. Computed twice per attempt: for the first command (before the forwarder's
 * port is known) and again once the network is up.
 *
 * @example
 * commandVariables({ pathDirs: ['/venv/bin', '/usr/bin'], user: 'flywheel', mode: 'strict', forwarderPort: 40123,
 *   networkAllowList: ['*.pypi.org'], environment });
 * // { PATH: '/venv/bin:/usr/bin', HOME: '/tmp/home', HTTPS_PROXY: 'http://127.0.0.1:40123', NO_PROXY: 'localhost,127.0.0.1,::1', … }
 */
import type { SandboxEnvironment } from './sandbox.ts';
import type { HarnessMode } from '../task/harness-mode.ts';

export function commandVariables(input: {
  pathDirs: string[];
  /** The sandbox user's name. */
  user: string;
  mode: HarnessMode;
  /** The forwarder's port inside the network namespace (strict mode; 0 until it is known). */
  forwarderPort: number;
  networkAllowList: string[];
  environment: SandboxEnvironment;
  /** The spec's own variables. */
  env?: Record<string, string>;
}): Record<string, string> {
  const { user, environment } = input;
  const env: Record<string, string> = {
    PATH: input.pathDirs.join(':'),
    HOME: '/tmp/home',
    USER: user,
    LOGNAME: user,
    SHELL: '/bin/bash',
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
  };
  if (input.forwarderPort > 0) {
    const proxy = `http://127.0.0.1:${input.forwarderPort}`;
    // Loopback names stay direct unless the allow-list names one (then it must go through the proxy).
    const allowed = input.networkAllowList.join(' ').toLowerCase();
    const noProxy = ['localhost', '127.0.0.1', '::1'].filter((h) => !allowed.includes(h)).join(',');
    for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
      env[k] = proxy;
      env[k.toLowerCase()] = proxy;
    }
    env.NO_PROXY = noProxy;
    env.no_proxy = noProxy;
    env.NODE_USE_ENV_PROXY = '1';
  }
  return { ...env, ...(environment.env ?? {}), ...(input.env ?? {}) };
}

/**
 * A status as a coloured word: good (done, passed, shipped), bad (failed, alert, crossed), busy (running, pending,
 * open), warn (warning, stalled), plain otherwise. The word is always shown: colour is never the only signal.
 *
 * @example
 * <Badge status="failed" /> // a red "failed"
 */
const TONES: Array<[RegExp, string]> = [
  [/^(done|passed|pass|succeeded|success|shipped|resolved|ok|acknowledged|ready|up|yes|active|promoted|decided)$/i, 'good'],
  [/^(failed|fail|error|infrastructure-error|alert|crossed|critical|rolled-?back|revoked|down|stopped|rejected|high)$/i, 'bad'],
  [/^(warning|warn|stalled|stale|medium|saturated|retired|deferred|ungraded)$/i, 'warn'],
  [/^(running|pending|open|queued|submitted|starting|runnable|draft|new|info|training|building-dataset|registering|evaluating)$/i, 'busy'],
];

export function toneOf(status: string): string {
  return TONES.find(([re]) => re.test(status))?.[1] ?? 'plain';
}

export function Badge(props: { status: string; title?: string }) {
  return (
    <span class={`badge badge-${toneOf(props.status)}`} title={props.title}>
      {props.status}
    </span>
  );
}

/**
 * A time as a person reads it: `5 min ago`, with the exact UTC time on hover and in `datetime`.
 *
 * @example
 * <RelativeTime iso={notice.createdAt} />
 */
import { formatTime, relativeTime } from './format.ts';

export function RelativeTime(props: { iso: string | undefined; now?: Date }) {
  if (!props.iso) return <span class="muted">—</span>;
  return (
    <time dateTime={props.iso} title={formatTime(props.iso)}>
      {relativeTime(props.iso, props.now)}
    </time>
  );
}

/**
 * A value with its interval: `42.3% [31.0%, 55.0%]` (or plain numbers). The interval is quieter than the value.
 *
 * @example
 * <Interval value={0.423} low={0.31} high={0.55} percent />
 */
import { formatNumber, formatPercent } from './format.ts';

export function Interval(props: { value: number | null | undefined; low?: number | null; high?: number | null; percent?: boolean }) {
  const f = props.percent ? formatPercent : formatNumber;
  const hasInterval = props.low !== undefined && props.low !== null && props.high !== undefined && props.high !== null;
  return (
    <span class="interval">
      <span class="num">{f(props.value)}</span>
      {hasInterval ? <span class="interval-range"> [{f(props.low)}, {f(props.high)}]</span> : null}
    </span>
  );
}

/**
 * The best strict score against the saturation threshold, as a bar with the threshold marked and both numbers
 * written out (the bar is never the only way to read them).
 *
 * @example
 * <SaturationMeter best={0.62} threshold={0.9} />
 */
import { formatPercent } from '../format.ts';

export function SaturationMeter(props: { best: number | undefined; threshold: number; thresholdIsDefault?: boolean }) {
  const best = props.best;
  const share = best === undefined ? 0 : Math.max(0, Math.min(1, best));
  return (
    <div class="saturation" data-best={best ?? ''} data-threshold={props.threshold}>
      <div
        class="meter"
        role="meter"
        aria-label="best strict score against the saturation threshold"
        aria-valuemin={0}
        aria-valuemax={1}
        aria-valuenow={share}
        style={{ position: 'relative', height: '10px', width: '12em', background: '#e5e7eb', borderRadius: '3px' }}
      >
        <div style={{ width: `${share * 100}%`, height: '100%', background: best !== undefined && best >= props.threshold ? '#b45309' : '#2563eb', borderRadius: '3px' }} />
        <div style={{ position: 'absolute', left: `${props.threshold * 100}%`, top: '-3px', height: '16px', borderLeft: '2px solid #111827' }} title="saturation threshold" />
      </div>
      <span class="saturation-text">
        best {best === undefined ? 'none yet' : formatPercent(best)} of {formatPercent(props.threshold, 0)} threshold{props.thresholdIsDefault ? ' (stage default)' : ''}
      </span>
    </div>
  );
}

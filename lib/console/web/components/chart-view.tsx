/**
 * A chart in the console: an ECharts instance (SVG renderer, so screenshots are deterministic and text is real text)
 * on a div, drawn from an option made by the shared builders (`lib/shared/chart/`), the same option the CLI's, the
 * API's and Slack's PNGs are rendered from. The option is set again when it changes, the chart follows the div's size,
 * and it is disposed when the component goes. An image to assistive technology, named by `label` (else the title).
 *
 * @example
 * <ChartView option={buildLineChart({ title: 'loss', x: { type: 'value' }, y: {}, series })} height={320} label="loss over steps" />
 */
import type { EChartsOption } from 'echarts';
import { useEffect, useRef } from 'preact/hooks';
import { echarts } from '../../../shared/chart/echarts-setup.ts';

export interface ChartViewProps {
  option: EChartsOption;
  /** Pixels; the width is the container's. @default 360 */
  height?: number;
  /** The accessible name; default the option's title. */
  label?: string;
}

type Chart = ReturnType<typeof echarts.init>;

/** The option's title text, for the accessible name when none is given. */
function titleOf(option: EChartsOption): string {
  const title = Array.isArray(option.title) ? option.title[0] : option.title;
  return typeof title?.text === 'string' && title.text ? title.text : 'chart';
}

export function ChartView({ option, height = 360, label }: ChartViewProps) {
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<Chart | null>(null);

  // Made once per mount: the instance, and a ResizeObserver that keeps it the div's size.
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const instance = echarts.init(el, null, { renderer: 'svg' });
    chart.current = instance;
    const observer = new ResizeObserver(() => instance.resize());
    observer.observe(el);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, []);

  // A new option replaces the old one whole (notMerge): a series that went away does not linger.
  useEffect(() => {
    chart.current?.setOption(option, { notMerge: true });
  }, [option]);

  return <div ref={host} class="chart-view" role="img" aria-label={label ?? titleOf(option)} style={{ width: '100%', height: `${height}px` }} />;
}

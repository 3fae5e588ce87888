/**
 * The one place ECharts is assembled, tree-shaken to what the option builders use: bar, line, scatter and custom
 * series (error bars, bands), title, grid, legend, tooltip and mark lines, and the SVG renderer. The console's
 * ChartView (browser) and `render-chart.ts` (Node, server-side SVG) both take `echarts` from here, so a chart the
 * builders make renders the same in both. Browser-safe.
 *
 * @example
 * import { echarts } from './echarts-setup.ts';
 * const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: 900, height: 500 });
 */
import * as echarts from 'echarts/core';
import { BarChart, CustomChart, LineChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkLineComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import { SVGRenderer } from 'echarts/renderers';

echarts.use([BarChart, CustomChart, LineChart, ScatterChart, GridComponent, LegendComponent, MarkLineComponent, TitleComponent, TooltipComponent, SVGRenderer]);

export { echarts };

/**
 * The files the PNG renderer reads at run time: resvg's WebAssembly and the DejaVu Sans fonts. Under plain Node they
 * are found in node_modules; in a Lambda bundle (where node_modules is gone) FlywheelFunction copies them beside the
 * handler and names that folder in `FLYWHEEL_CHART_ASSETS`. One list for both sides, so they cannot drift apart.
 */

/** The variable naming the folder that holds the files below by their `name`. */
export const CHART_ASSETS_VARIABLE = 'FLYWHEEL_CHART_ASSETS';

export interface ChartAsset {
  /** The file's name in the assets folder. */
  name: string;
  /** Its path from the project root (what a bundler hook copies). */
  source: string;
  /** Its module specifier, resolved from node_modules when no assets folder is named. */
  specifier: string;
}

export const CHART_WASM: ChartAsset = {
  name: 'resvg.wasm',
  source: 'node_modules/@resvg/resvg-wasm/index_bg.wasm',
  specifier: '@resvg/resvg-wasm/index_bg.wasm',
};

export const CHART_FONTS: readonly ChartAsset[] = [
  { name: 'DejaVuSans.ttf', source: 'node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf', specifier: 'dejavu-fonts-ttf/ttf/DejaVuSans.ttf' },
  { name: 'DejaVuSans-Bold.ttf', source: 'node_modules/dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf', specifier: 'dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf' },
];

export const CHART_ASSETS: readonly ChartAsset[] = [CHART_WASM, ...CHART_FONTS];

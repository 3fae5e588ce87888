import type { PageEntry } from '../page.ts';
// import pages: shell

// import pages: insights

/** The console's pages, in sidebar order. Each area adds its entries under its anchor. */
export const pages: PageEntry[] = [
  // pages: shell
  // pages: insights
];

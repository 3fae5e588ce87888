import type { ComponentChildren } from 'preact';
import type { ConsoleApi } from './api-client.ts';

/** What every console page receives from the shell (`main.tsx`). */
export interface PageProps {
  api: ConsoleApi;
  /** `:name` segments of the page's path, decoded. */
  params: Record<string, string>;
  /** The hash route's query (`#/results?suite=x`). */
  query: URLSearchParams;
  /** Goes to another console path (`/attempts/a-1`), keeping the history. */
  navigate(path: string): void;
}

/** One entry of the page table (`pages/index.ts`): the shell routes on `path` and lists `nav` pages in the sidebar. */
export interface PageEntry {
  /** Hash route, e.g. `/results` or `/attempts/:id`. */
  path: string;
  title: string;
  /** Shown in the sidebar (pages with parameters are not). */
  nav: boolean;
  component: (props: PageProps) => ComponentChildren;
}

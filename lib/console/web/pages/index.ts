import type { PageEntry } from '../page.ts';
// import pages: shell
import { AnnotationsPage } from './annotations-page.tsx';
import { ComputePage } from './compute-page.tsx';
import { FailureModesPage } from './failure-modes-page.tsx';
import { FeedbackEventPage } from './feedback-event-page.tsx';
import { FeedbackPage } from './feedback-page.tsx';
import { JobsPage } from './jobs-page.tsx';
import { NoticesPage } from './notices-page.tsx';
import { OverviewPage } from './overview-page.tsx';
import { ReviewQueuePage } from './review-queue-page.tsx';

// import pages: insights
import { AttemptPage } from './attempt-page.tsx';
import { AttemptsPage } from './attempts-page.tsx';
import { ExperimentPage } from './experiment-page.tsx';
import { ExperimentsPage } from './experiments-page.tsx';
import { ResultsPage } from './results-page.tsx';
import { SuitePage } from './suite-page.tsx';
import { SuitesPage } from './suites-page.tsx';
import { TrainingPage } from './training-page.tsx';
import { TrainingRunPage } from './training-run-page.tsx';

/** The console's pages, in sidebar order. Each area adds its entries under its anchor. */
export const pages: PageEntry[] = [
  // pages: shell
  { path: '/', title: 'Overview', nav: true, component: OverviewPage },
  { path: '/feedback', title: 'Feedback', nav: true, component: FeedbackPage },
  { path: '/feedback/:id', title: 'Feedback event', nav: false, component: FeedbackEventPage },
  { path: '/failure-modes', title: 'Failure modes', nav: true, component: FailureModesPage },
  { path: '/review', title: 'Review queue', nav: true, component: ReviewQueuePage },
  { path: '/annotations', title: 'Annotations', nav: true, component: AnnotationsPage },
  { path: '/notices', title: 'Notices', nav: true, component: NoticesPage },
  { path: '/compute', title: 'Compute', nav: true, component: ComputePage },
  { path: '/jobs', title: 'Jobs', nav: true, component: JobsPage },
  // pages: insights
  { path: '/results', title: 'Results', nav: true, component: ResultsPage },
  { path: '/attempts', title: 'Attempts', nav: true, component: AttemptsPage },
  { path: '/attempts/:id', title: 'Attempt', nav: false, component: AttemptPage },
  { path: '/suites', title: 'Suites', nav: true, component: SuitesPage },
  { path: '/suites/:id', title: 'Suite', nav: false, component: SuitePage },
  { path: '/experiments', title: 'Experiments', nav: true, component: ExperimentsPage },
  { path: '/experiments/:id', title: 'Experiment', nav: false, component: ExperimentPage },
  { path: '/training', title: 'Training', nav: true, component: TrainingPage },
  { path: '/training/:id', title: 'Training run', nav: false, component: TrainingRunPage },
];

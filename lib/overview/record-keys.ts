/**
 * The record layout of the overview's stored counts, in one place so writers and readers agree.
 *
 * | item | pk | sk |
 * | --- | --- | --- |
 * | feedback counts of one settled hour | `OVERVIEWFBHOUR` | `<YYYY-MM-DDTHH>` |
 */
export const overviewKeys = {
  feedbackHours: 'OVERVIEWFBHOUR',
  feedbackHour: (hour: string) => ({ pk: 'OVERVIEWFBHOUR', sk: hour }),
} as const;

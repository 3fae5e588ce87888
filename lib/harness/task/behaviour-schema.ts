/**
 * Behavioural cases: what happens around the agent during an attempt besides the instruction — scripted user turns,
 * a simulated user, tools that come and go, fake external services with scripted state. Absent: a plain task.
 */
import { z } from 'zod';

export const TaskBehaviourSchema = z.strictObject({});
export type TaskBehaviour = z.output<typeof TaskBehaviourSchema>;

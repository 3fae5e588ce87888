import { readFile } from 'node:fs/promises';
import { ValidationError } from '../../errors.ts';
import { parseTask, type Task } from './task-schema.ts';

/** Reads and validates a task JSON file; errors name the file and each offending field. */
export async function loadTask(path: string): Promise<Task> {
  const text = await readFile(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`${path} is not valid JSON: ${(error as Error).message}`, [{ path: '(root)', message: 'invalid JSON' }]);
  }
  return parseTask(json, path);
}

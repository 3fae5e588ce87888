/**
 * The judge registry's errors. Each is a general error (`NotFoundError` → 404, `ConflictError` → 409) so the HTTP
 * status map, a state machine's Catch and a log query treat it as one; `JudgeRegistryErrorNames` spells the names.
 */
import { ConflictError, ErrorNames, NotFoundError } from '../../errors.ts';

export const JudgeRegistryErrorNames = {
  notFound: ErrorNames.notFound,
  notPromoted: ErrorNames.notFound,
  promotionRefused: ErrorNames.conflict,
  promotionConflict: ErrorNames.conflict,
  retired: ErrorNames.conflict,
} as const;

/** No judge of this name, or no such version of it (404). */
export class JudgeNotFoundError extends NotFoundError {
  constructor(what: string) {
    super(`No judge ${what} is registered`);
  }
}

/** A bare judge name was resolved while no version of it is promoted (404). */
export class JudgeNotPromotedError extends NotFoundError {
  constructor(name: string) {
    super(`Judge ${name} has no promoted version: name a version (${name}@<version>) or promote one`);
  }
}

/** The acceptance rule refused the promotion (409): `reasons` says which criterion or condition failed. */
export class JudgePromotionRefusedError extends ConflictError {
  readonly reasons: string[];
  constructor(ref: string, reasons: string[]) {
    super(`Promotion of ${ref} refused by the acceptance rule: ${reasons.join('; ')} (an admin may force it with a reason)`);
    this.reasons = reasons;
  }
}

/** Another promotion or demotion of the same judge won the race (409): read the judge again, then decide. */
export class JudgePromotionConflictError extends ConflictError {
  constructor(name: string) {
    super(`Judge ${name} was promoted or demoted by another request meanwhile; read it again and decide again`);
  }
}

/** A retired version cannot be promoted (409). */
export class JudgeRetiredError extends ConflictError {
  constructor(ref: string) {
    super(`Judge ${ref} is retired and cannot be promoted; register a new version`);
  }
}

/** Types for `asl-validator` (the package ships none): the default export validates one definition. */
declare module 'asl-validator' {
  interface AslValidationResult {
    isValid: boolean;
    errors: unknown[];
    errorsText(separator?: string): string;
  }
  function validator(definition: object, options?: { checkPaths?: boolean; checkArn?: boolean }): AslValidationResult;
  export default validator;
}

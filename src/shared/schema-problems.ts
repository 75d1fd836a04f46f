import type { ZodError, z } from 'zod';

/**
 * A schema's complaints in one line, each with its path; an unknown key (refused by a strict
 * schema) is named whole, `unknown key "approval.mod"`. Of a union that matched no form, the
 * problems of the form that came closest.
 */
export function schemaProblems(error: ZodError): string {
  return schemaProblemList(error).join('; ');
}

/** The same complaints, one string each. */
export function schemaProblemList(error: ZodError): string[] {
  return issueTexts(error.issues, []);
}

function issueTexts(issues: readonly z.core.$ZodIssue[], under: readonly PropertyKey[]): string[] {
  return issues.flatMap((issue) => {
    const path = [...under, ...issue.path].map(String);
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => `unknown key ${JSON.stringify([...path, key].join('.'))}`);
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const closest = issue.errors.reduce((best, form) => (form.length < best.length ? form : best));
      return issueTexts(closest, path);
    }
    return [path.length ? `${path.join('.')}: ${issue.message}` : issue.message];
  });
}

import { appendFile } from 'node:fs/promises';
import path from 'node:path';

/** The team's own activity: writes one line per filing to MARKER_DIR/filed. */
export function createTeamActivities(markerDir: string) {
  return {
    async fileTriage(ticket: string, answer: string): Promise<string> {
      const line = `${ticket}: ${answer}`;
      await appendFile(path.join(markerDir, 'filed'), `${line}\n`);
      return line;
    },
  };
}

export type TeamActivities = ReturnType<typeof createTeamActivities>;

/**
 * zod, loaded once per workflow thread and shared by every workflow in it (the bundler's
 * `preloadModules`, see src/worker/workflow-bundle.ts). Any other module of the bundle is
 * instantiated anew for each workflow in the worker's cache, and zod's own modules cost about
 * 0.75 MB each time. Temporal deep-freezes what is shared; zod sets its default locale, memoizer and
 * code-generation check when it first builds and parses an object schema, so one is built and
 * parsed here, before the freeze. Which state zod sets lazily can change between its releases, so
 * package.json pins zod, and an upgrade must pass test/integration/shared-zod.test.ts (and the rest
 * of the suite, which runs on this bundle).
 */
import { z } from 'zod';

z.object({ warmUp: z.string() }).safeParse({ warmUp: 1 });

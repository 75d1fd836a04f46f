/**
 * The workflow bundle's module graph, shared by every workflow a worker thread has cached. The bundle
 * preloads its entry module and then src/workflows/settle-shared-modules.ts (the bundler's
 * `preloadModules`, see src/worker/workflow-bundle.ts), so each module (zod, the Temporal SDK, every
 * schema, policy and workflow function) is instantiated once per worker thread instead of once per
 * cached workflow, which cut a cached workflow's memory by about 0.7 MB.
 *
 * Temporal deep-freezes what is shared, once the preload is done. zod builds members on first use and
 * stores them on the schema (its bound methods, `~standard`, derived internals such as an object's
 * shape) and sets its default locale, memoizer and code-generation check when it first builds and
 * parses an object schema; on a frozen schema each of those would throw. So the preload uses zod once
 * and reads every lazily built member of every schema the loaded modules export, before the freeze. A
 * schema a module keeps to itself is never frozen and needs none of this. Which members zod builds
 * lazily can change between its releases, so package.json pins zod, and an upgrade must pass
 * test/integration/shared-module-graph.test.ts (and the rest of the suite, which runs on this bundle).
 *
 * What a module keeps at its top level is shared by every conversation of the thread: such state must
 * be constant (a frozen `Set` or `Map` still accepts writes, so none may be written after load; lint
 * refuses a top-level `let`, a writable `Map` or `Set` and a static field that is not readonly). A
 * schema derived from a shared one (`extend`, `refine`, `describe`) is built at module load: zod
 * copies the frozen original's internals to build it, which the freeze refuses.
 */
import { z } from 'zod';

/** The bundle's module factories, by id: webpack's own variable, present only inside the bundle. */
declare const __webpack_modules__: Record<string, unknown> | undefined;

type ModuleRecord = { exports: unknown } | undefined;

/**
 * Builds the lazy members of every exported schema. Building them can expose schemas not reachable
 * before (a shape's members, a derived internal), so it goes on until a walk finds none unsettled;
 * zod memoizes what it builds, so a few walks settle the graph.
 */
export function settleExportedSchemas(): void {
  z.object({ warmUp: z.string() }).safeParse({ warmUp: 1 });
  const settled = new WeakSet<object>();
  const patternsSeen = new WeakSet<object>();
  for (let walks = 0; walks < 20; walks++) {
    const unsettled = exportedSchemas().filter((schema) => !settled.has(schema));
    if (unsettled.length === 0) return;
    for (const schema of unsettled) {
      settled.add(schema);
      readLazyMembers(schema);
      readLazyMembers(schema._zod);
      try {
        schema.safeParse(undefined);
      } catch {
        // A refinement may throw on a value its schema refuses; what the parse built on the way is kept.
      }
      replacePatterns(schema, patternsSeen);
    }
  }
}

/**
 * zod sets a pattern's `lastIndex` before each test, which a frozen RegExp refuses: each pattern a
 * schema holds becomes a stand-in the freeze cannot freeze, over a copy nothing else reaches.
 */
function replacePatterns(value: object, seen: WeakSet<object>): void {
  if (seen.has(value)) return;
  seen.add(value);
  for (const key of Reflect.ownKeys(value)) {
    const member = Object.getOwnPropertyDescriptor(value, key);
    if (member === undefined || !('value' in member)) continue;
    if (member.value instanceof RegExp) {
      if (member.writable) (value as Record<PropertyKey, unknown>)[key] = unfreezablePattern(member.value);
    } else if (member.value !== null && typeof member.value === 'object') {
      replacePatterns(member.value as object, seen);
    }
  }
}

/** Refuses `Object.freeze` (which Temporal's freeze tolerates in what it reaches) and answers as the pattern. */
function unfreezablePattern(pattern: RegExp): RegExp {
  // Methods are bound to the copy once each, not on every test a parse makes.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(new RegExp(pattern.source, pattern.flags), {
    preventExtensions: () => false,
    get(target, key) {
      const member: unknown = Reflect.get(target, key, target);
      if (typeof member !== 'function' || key === 'constructor') return member;
      if (!bound.has(key)) bound.set(key, member.bind(target));
      return bound.get(key);
    },
  });
}

/**
 * Every zod schema reachable from the exports of the bundle's loaded modules, found the way
 * Temporal's freeze walks them (own members, getters read): the schemas that freeze makes read-only.
 */
export function exportedSchemas(): z.ZodType[] {
  if (typeof __webpack_modules__ === 'undefined') return [];
  const cache = (globalThis as { __webpack_module_cache__?: Record<string, ModuleRecord> })
    .__webpack_module_cache__;
  if (cache === undefined) return [];
  const found: z.ZodType[] = [];
  const seen = new WeakSet<object>();
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    if (value instanceof z.ZodType) found.push(value);
    for (const key of Reflect.ownKeys(value)) {
      let member: unknown;
      try {
        member = (value as Record<PropertyKey, unknown>)[key];
      } catch {
        continue;
      }
      walk(member);
    }
  };
  for (const id of Object.keys(__webpack_modules__)) walk(cache[id]?.exports);
  return found;
}

/** Reads every getter of the object's prototypes, so what each builds on first read is built now. */
function readLazyMembers(target: object): void {
  for (
    let proto: unknown = Object.getPrototypeOf(target);
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const key of Reflect.ownKeys(proto as object)) {
      if (Object.getOwnPropertyDescriptor(proto, key)?.get === undefined) continue;
      try {
        void (target as Record<PropertyKey, unknown>)[key];
      } catch {
        // A member that cannot be built yet is left to build on first use, as before.
      }
    }
  }
}

// @ungap/structured-clone ships no types.
declare module '@ungap/structured-clone' {
  export default function structuredClone<T>(value: T): T;
}

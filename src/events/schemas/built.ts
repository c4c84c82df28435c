// The mark of an event made by a builder of this directory. Actions publish
// through Emit and Emission (actions/context.ts), which take only BuiltEvent:
// an object literal written in an action does not type-check there, so every
// published event goes through its builder and matches its schema.
//
// The mark exists only for the type checker: a built event is the plain
// object its builder returns.
declare const BUILT: unique symbol

/** An event a builder of events/schemas made. */
export type Built<E> = E & { readonly [BUILT]: true }

/** Marks a builder: same parameters and object, its result typed Built<E>. */
export const builder = <A extends unknown[], E>(build: (...args: A) => E) => build as (...args: A) => Built<E>

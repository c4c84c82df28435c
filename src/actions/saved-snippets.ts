// Saved snippets (upstream zerver/actions/saved_snippets.py, levels 297 and
// 368): a user creates, edits and deletes their own; each change is told to
// the user's clients by a saved_snippets event. Title and content are stripped
// of surrounding whitespace, then must be 1–60 and 1–10,000 characters, as
// upstream's endpoint checks them; a user keeps at most
// MAX_SAVED_SNIPPETS_PER_USER (Roost's bound: upstream has none).
import { inTransaction, type ActionContext } from './context.js'
import { codePointLength, MAX_MESSAGE_LENGTH, MAX_SAVED_SNIPPET_TITLE_LENGTH, MAX_SAVED_SNIPPETS_PER_USER } from '../domain/limits.js'
import { savedSnippetNotFound, textTooLong, textTooShort, tooManySavedSnippets } from '../errors.js'
import { presentSavedSnippet } from '../present/saved-snippet.js'
import { savedSnippetsAddEvent, savedSnippetsRemoveEvent, savedSnippetsUpdateEvent } from '../events/schemas/index.js'

/** Stripped and within its bounds (upstream StringConstraints(min_length=1, max_length, strip_whitespace)). */
function checkedText(name: 'title' | 'content', value: string): string {
  const text = value.trim()
  const limit = name === 'title' ? MAX_SAVED_SNIPPET_TITLE_LENGTH : MAX_MESSAGE_LENGTH
  if (text.length === 0) throw textTooShort(name)
  if (codePointLength(text) > limit) throw textTooLong(name, limit)
  return text
}

export async function createSavedSnippet(ctx: ActionContext, input: { title: string; content: string }): Promise<number> {
  const title = checkedText('title', input.title)
  const content = checkedText('content', input.content)
  const { user } = ctx
  return inTransaction(ctx, async (tx, emit) => {
    // Serializes a user's concurrent creations, so the cap holds.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(7433, ${user.id}::int)`
    if ((await tx.savedSnippet.count({ where: { userId: user.id } })) >= MAX_SAVED_SNIPPETS_PER_USER) throw tooManySavedSnippets(MAX_SAVED_SNIPPETS_PER_USER)
    const snippet = await tx.savedSnippet.create({ data: { userId: user.id, title, content, dateCreated: ctx.now() } })
    emit(savedSnippetsAddEvent(presentSavedSnippet(snippet)), [user.id])
    return snippet.id
  })
}

/**
 * Changes the given fields. With neither, upstream answers success at once,
 * without looking the snippet up and without an event; so does Roost.
 */
export async function editSavedSnippet(ctx: ActionContext, id: number, input: { title?: string; content?: string }): Promise<void> {
  const title = input.title === undefined ? undefined : checkedText('title', input.title)
  const content = input.content === undefined ? undefined : checkedText('content', input.content)
  if (title === undefined && content === undefined) return
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.savedSnippet.updateMany({ where: { id, userId: ctx.user.id }, data: { title, content } })
    if (count === 0) throw savedSnippetNotFound()
    const snippet = await tx.savedSnippet.findUniqueOrThrow({ where: { id } })
    emit(savedSnippetsUpdateEvent(presentSavedSnippet(snippet)), [ctx.user.id])
  })
}

export async function deleteSavedSnippet(ctx: ActionContext, id: number): Promise<void> {
  await inTransaction(ctx, async (tx, emit) => {
    const { count } = await tx.savedSnippet.deleteMany({ where: { id, userId: ctx.user.id } })
    if (count === 0) throw savedSnippetNotFound()
    emit(savedSnippetsRemoveEvent(id), [ctx.user.id])
  })
}

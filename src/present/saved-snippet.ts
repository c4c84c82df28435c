// SavedSnippet row → the API's saved snippet object (GET /saved_snippets,
// register's `saved_snippets`, and the saved_snippets events).
import type { SavedSnippet } from '../db/index.js'
import type { SavedSnippetDict } from '../events/schemas/common.js'

/** The wire type, defined by its schema in events/schemas/common.ts (date_created: UNIX seconds). */
export type { SavedSnippetDict }

export function presentSavedSnippet(snippet: SavedSnippet): SavedSnippetDict {
  return {
    id: snippet.id,
    title: snippet.title,
    content: snippet.content,
    date_created: Math.floor(snippet.dateCreated.getTime() / 1000),
  }
}

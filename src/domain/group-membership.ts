// Transitive user-group membership: a user belongs to every group it is a
// direct member of, and to every group that has one of those as a subgroup
// (recursively). System groups use this for the role ladder
// (role:owners ⊂ role:administrators ⊂ … ⊂ role:everyone).

export interface SubgroupEdge {
  supergroupId: number
  subgroupId: number
}

/** Every group reached from `directGroupIds` by walking subgroup → supergroup edges. */
export function recursiveGroupIds(directGroupIds: Iterable<number>, edges: readonly SubgroupEdge[]): Set<number> {
  const supergroupsOf = new Map<number, number[]>()
  for (const edge of edges) {
    const list = supergroupsOf.get(edge.subgroupId)
    if (list) list.push(edge.supergroupId)
    else supergroupsOf.set(edge.subgroupId, [edge.supergroupId])
  }
  const seen = new Set<number>()
  const pending = [...directGroupIds]
  while (pending.length > 0) {
    const id = pending.pop() as number
    if (seen.has(id)) continue
    seen.add(id)
    for (const parent of supergroupsOf.get(id) ?? []) if (!seen.has(parent)) pending.push(parent)
  }
  return seen
}

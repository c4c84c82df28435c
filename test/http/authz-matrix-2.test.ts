// Shard 2 of 8 of the authorization matrix (authz-matrix.ts).
import { runAuthorizationMatrix } from './authz-matrix.js'

runAuthorizationMatrix(1, 8)

import { getDb } from "@/db/client";
import { withApiKey } from "@/lib/http/with-api-key";
import { moveOperations } from "@/lib/moves/operations";
import { nodeMoves } from "@/lib/moves/service";
import { getNode } from "@/lib/nodes/service";

// GET /api/admin/nodes/{id}/moves — the moves off the node (a drain's progress)
export const GET = withApiKey(moveOperations.moves, async ({ params }) => {
  const db = await getDb();
  await getNode(db, params.id);
  return { moves: await nodeMoves(db, params.id) };
});

import { buildIfNeeded } from "./build-if-needed";

// `npm start`: build when needed, then the server (migrations, then HTTP on PORT).
buildIfNeeded();
await import("../server");

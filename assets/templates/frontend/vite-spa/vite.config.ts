import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// `framework env up` passes the API's address (FRAMEWORK_API_URL), the base path
// (FRAMEWORK_BASE_PATH) and the dev server's port (PORT); VITE_API_URL / VITE_BASE_PATH win.
const base = process.env.VITE_BASE_PATH ?? process.env.FRAMEWORK_BASE_PATH ?? "__BASE_PATH__";

export default defineConfig({
  plugins: [react()],
  base: base.endsWith("/") ? base : `${base}/`,
  define: {
    "import.meta.env.VITE_API_URL": JSON.stringify(process.env.VITE_API_URL ?? process.env.FRAMEWORK_API_URL ?? ""),
  },
  server: { host: "127.0.0.1", port: Number(process.env.PORT ?? __PORT__), strictPort: true },
  build: { outDir: "dist" },
});

import type { NextConfig } from "next";

// `framework env up` passes the API's address (FRAMEWORK_API_URL) and the base path; the scaffold's
// --base-path is written to .env as NEXT_PUBLIC_BASE_PATH (an environment variable of that name wins).
const basePath = process.env.NEXT_PUBLIC_BASE_PATH ?? process.env.FRAMEWORK_BASE_PATH ?? "";

const config: NextConfig = {
  output: __NEXT_OUTPUT__,
  basePath: basePath === "/" ? "" : basePath,
  trailingSlash: true,
  env: {
    NEXT_PUBLIC_API_URL: process.env.NEXT_PUBLIC_API_URL ?? process.env.FRAMEWORK_API_URL ?? "",
  },
};

export default config;

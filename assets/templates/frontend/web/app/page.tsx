export default function Page() {
  return (
    <main>
      <h1>__NAME__</h1>
      <p>Edit app/page.tsx; `framework generate` writes each service&apos;s client under src/gen/.</p>
    </main>
  );
}

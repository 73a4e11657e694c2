export default function App() {
  return (
    <main>
      <h1>__NAME__</h1>
      <p>Edit src/App.tsx; `framework generate` writes each service's client under src/gen/.</p>
    </main>
  );
}

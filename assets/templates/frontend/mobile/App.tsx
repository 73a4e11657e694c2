import { Text, View } from "react-native";

export default function App() {
  return (
    <View>
      <Text>__NAME__</Text>
      <Text>Edit App.tsx; `framework generate` writes each service&apos;s client under src/gen/.</Text>
    </View>
  );
}

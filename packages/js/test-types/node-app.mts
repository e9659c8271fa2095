// A Node project's use of the package's types, checked by scripts/pack-smoke.sh with tsc under
// moduleResolution node16, nodenext and bundler (the installed tarball, its `exports` map).
// Each `@ts-expect-error` line is a mistake the types must catch.
import { init, open, openSync, version, type Database, type JsonValue, type SyncKeyspace } from "shaledb";
import { openSync as openSyncInline } from "shaledb/inline";
import shaledbWasm from "shaledb/shaledb.wasm";

/** Whether A and B are the same type (not merely assignable). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

interface User {
  name: string;
  age: number;
}
interface Order {
  id: number;
  items: string[];
}

await init(shaledbWasm);
const v: string = version();

// openSync resolves (the Node types, under every resolution) and types json values as asked.
const db = openSync<User>("./typed", { valueEncoding: "json" });
db.put("ada", { name: "Ada", age: 36 });
const ada = db.get("ada");
const adaIsUser: Equal<typeof ada, User | undefined> = true;
// @ts-expect-error a value that is not a User
db.put("bob", { name: "Bob" });
// @ts-expect-error get() gives a User, not a string
const wrong: string | undefined = db.get("ada");
// @ts-expect-error typed values need the json encoding
openSync<User>("./typed");
// @ts-expect-error typed values need the json encoding, not utf8
openSync<User>("./typed", { valueEncoding: "utf8" });

const orders: SyncKeyspace<string, Order> = db.keyspace<Order>("orders", { valueEncoding: "json" });
const order = orders.get("1");
const orderIsOrder: Equal<typeof order, Order | undefined> = true;
// @ts-expect-error a keyspace's typed values need the json encoding
db.keyspace<Order>("orders");

// Binary keys with typed values.
const binary = openSync<User, "binary">("./typed-binary", { keyEncoding: "binary", valueEncoding: "json" });
const byBytes = binary.get(new Uint8Array([1]));
const byBytesIsUser: Equal<typeof byBytes, User | undefined> = true;

// Untyped stays as before: JsonValue for json, string for utf8.
const plain = openSync("./plain", { valueEncoding: "json" });
const p = plain.get("k");
const plainIsJson: Equal<typeof p, JsonValue | undefined> = true;
const text = openSync("./text").get("k");
const textIsString: Equal<typeof text, string | undefined> = true;

// The Promise API.
const promised: Database<string, User> = await open<User>("./typed-promise", { valueEncoding: "json" });
const got = await promised.get("ada");
const gotIsUser: Equal<typeof got, User | undefined> = true;
const ordersAsync = await promised.keyspace<Order>("orders", { valueEncoding: "json" });
const asyncOrder = await ordersAsync.get("1");
const asyncOrderIsOrder: Equal<typeof asyncOrder, Order | undefined> = true;
// @ts-expect-error typed values need the json encoding
await open<User>("./typed-promise");

// The inline entry has the same types.
const inline = openSyncInline<User>("./inline", { valueEncoding: "json" });
const inlineUser = inline.get("ada");
const inlineIsUser: Equal<typeof inlineUser, User | undefined> = true;

console.log(v, wrong, adaIsUser, orderIsOrder, byBytesIsUser, plainIsJson, textIsString, gotIsUser);
console.log(asyncOrderIsOrder, inlineIsUser);

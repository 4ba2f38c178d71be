"""Expert channel archives: Telegram Desktop exports, the SQL expert store, the bundled demo
channels."""

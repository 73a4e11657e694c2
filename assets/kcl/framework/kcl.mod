[package]
name = "framework"
edition = "v0.11.0"
version = "0.1.0"

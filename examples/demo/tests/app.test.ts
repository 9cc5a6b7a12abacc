import { app } from "../src/app";

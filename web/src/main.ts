import { mount } from 'svelte'
import App from './views/app.svelte'
import './lib/theme.css'

const target = document.getElementById('app')
if (target) mount(App, { target })
